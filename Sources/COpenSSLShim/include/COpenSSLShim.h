// What Swift cannot call directly in OpenSSL: macros such as BIO_get_mem_data.
#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <openssl/bio.h>
#include <openssl/evp.h>

/// The bytes written so far into a memory BIO (BIO_get_mem_data); returns their length.
long copensslshim_bio_mem_data(BIO *bio, char **data);

/// An RSA public key from a JWK's big-endian modulus and exponent (OSSL_PARAM building is
/// macro-heavy). NULL on failure.
EVP_PKEY *copensslshim_rsa_public_key(const unsigned char *modulus, size_t modulus_length,
                                      const unsigned char *exponent, size_t exponent_length);

/// Converts a DER ECDSA signature into the fixed-size r || s form JWS (ES256) uses.
/// Returns 0 on success.
int copensslshim_ecdsa_der_to_raw(const unsigned char *der, size_t der_length,
                                  unsigned char *raw, size_t component_length);

/// The reverse, for checking an ES256 signature with OpenSSL: writes the DER form into `der`
/// and returns its length, or -1 (never more than 72 bytes for P-256).
int copensslshim_ecdsa_raw_to_der(const unsigned char *raw, size_t component_length,
                                  unsigned char *der, size_t der_capacity);

#endif
