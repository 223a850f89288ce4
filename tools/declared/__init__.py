"""What tools/protogen.py reads from proto/ and the Swift it renders from it, one job per module.

descriptors  proto/ read through protoc into File/Message/Field records, types resolved
messages     each proto file's message types, speaking the proto3 JSON mapping
operations   gateway.proto's rpcs and their `operation` options, and the Swift spellings the
             emitters below share
workers      the workers' handler protocols and dispatch tables
bodies       the request bodies: their JSON Schemas, readers and generated handlers
shapes       the answers' shapes (answers.proto): the document's schemas and shared responses
gateway      the gateway's declared operations and each service's routes

Each imports only those above it, so the package has no import cycles.
"""
