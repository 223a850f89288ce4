// libcbor (Debian libcbor-dev): the CBOR decoder WebAuthn's attestation objects and COSE keys need.
#include <cbor.h>
