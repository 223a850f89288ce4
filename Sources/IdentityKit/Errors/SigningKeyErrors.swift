/// Errors of signing-key rotation (`POST /v1/admin/keys/rotate`).
extension ServiceError {
    /// The last rotation's next key has not started signing yet: rotating again would drop a
    /// key that backends' cached JWKS may not hold. Retry after its `signs_from`.
    public static let keyRotationPending = ServiceError(code: "auth/key-rotation-pending", status: 409,
                                                        detail: "A rotated-in key is still waiting to sign; rotate again after it does.")
}
