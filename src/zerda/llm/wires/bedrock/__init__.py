"""The bedrock wire: everything Zerda knows about this protocol, library side."""
