"""The openai_responses wire: everything Zerda knows about this protocol, library side."""
