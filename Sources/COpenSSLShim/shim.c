#include "COpenSSLShim.h"
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/param_build.h>

long copensslshim_bio_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

EVP_PKEY *copensslshim_rsa_public_key(const unsigned char *modulus, size_t modulus_length,
                                      const unsigned char *exponent, size_t exponent_length) {
    EVP_PKEY *key = NULL;
    BIGNUM *n = BN_bin2bn(modulus, (int)modulus_length, NULL);
    BIGNUM *e = BN_bin2bn(exponent, (int)exponent_length, NULL);
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *context = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    if (n && e && builder && context
        && OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_N, n)
        && OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_E, e)
        && (params = OSSL_PARAM_BLD_to_param(builder)) != NULL
        && EVP_PKEY_fromdata_init(context) == 1) {
        if (EVP_PKEY_fromdata(context, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) key = NULL;
    }
    EVP_PKEY_CTX_free(context);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(builder);
    BN_free(n);
    BN_free(e);
    return key;
}

int copensslshim_ecdsa_der_to_raw(const unsigned char *der, size_t der_length,
                                  unsigned char *raw, size_t component_length) {
    const unsigned char *cursor = der;
    ECDSA_SIG *signature = d2i_ECDSA_SIG(NULL, &cursor, (long)der_length);
    if (signature == NULL) return -1;
    const BIGNUM *r = NULL, *s = NULL;
    ECDSA_SIG_get0(signature, &r, &s);
    int ok = BN_bn2binpad(r, raw, (int)component_length) == (int)component_length
          && BN_bn2binpad(s, raw + component_length, (int)component_length) == (int)component_length;
    ECDSA_SIG_free(signature);
    return ok ? 0 : -1;
}

int copensslshim_ecdsa_raw_to_der(const unsigned char *raw, size_t component_length,
                                  unsigned char *der, size_t der_capacity) {
    ECDSA_SIG *signature = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(raw, (int)component_length, NULL);
    BIGNUM *s = BN_bin2bn(raw + component_length, (int)component_length, NULL);
    if (signature == NULL || r == NULL || s == NULL || ECDSA_SIG_set0(signature, r, s) != 1) {
        ECDSA_SIG_free(signature);
        BN_free(r);
        BN_free(s);
        return -1;
    }
    int length = i2d_ECDSA_SIG(signature, NULL);
    if (length <= 0 || (size_t)length > der_capacity) {
        ECDSA_SIG_free(signature);
        return -1;
    }
    unsigned char *cursor = der;
    length = i2d_ECDSA_SIG(signature, &cursor);
    ECDSA_SIG_free(signature);
    return length;
}
