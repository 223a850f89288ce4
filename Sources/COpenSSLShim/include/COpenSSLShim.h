// What Swift cannot call directly in OpenSSL: macros such as BIO_get_mem_data.
#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <openssl/bio.h>

/// The bytes written so far into a memory BIO (BIO_get_mem_data); returns their length.
long copensslshim_bio_mem_data(BIO *bio, char **data);

#endif
