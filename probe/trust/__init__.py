"""Trust: card signatures, auth flows, TLS material. Imports only the wire and the model, never a consumer."""
