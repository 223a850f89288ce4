-- An absolute lifetime per app (PRODUCT.md, "Sessions": default 365 days) beside the 90-day
-- idle expiry: however often a session refreshes, it ends this long after it began.
ALTER TABLE apps ADD COLUMN session_lifetime integer NOT NULL DEFAULT 31536000
    CHECK (session_lifetime BETWEEN 3600 AND 315360000);
