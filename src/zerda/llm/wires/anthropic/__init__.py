"""The anthropic wire: everything Zerda knows about this protocol, library side."""
