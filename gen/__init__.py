"""The generated code (`make gen`): protoc's modules of every file of proto/, the descriptor set."""
