#include "COpenSSLShim.h"

long copensslshim_bio_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}
