-- The scale bench's data (bench/scale.py): :users users spread over the apps in :apps (a
-- text array literal), :sessions_per_user live sessions each with one live refresh token,
-- written straight into the store's tables in time order, as the service would have written
-- them over the last :days days: the same columns the token worker fills (ULID ids with their
-- prefixes, Argon2id PHC strings, SHA-256 hashes, the hashed command key, browser user agents).
-- No seeded user can sign in (their hashes are random): the bench's own users sign up through
-- the API.
\set ON_ERROR_STOP on

-- A ULID (lower-case Crockford base32) from a millisecond time and a seed for its 80 random bits.
CREATE FUNCTION pg_temp.seed_ulid(ms bigint, seed text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT substr(a, ((ms >> 45) & 31)::int + 1, 1) || substr(a, ((ms >> 40) & 31)::int + 1, 1)
        || substr(a, ((ms >> 35) & 31)::int + 1, 1) || substr(a, ((ms >> 30) & 31)::int + 1, 1)
        || substr(a, ((ms >> 25) & 31)::int + 1, 1) || substr(a, ((ms >> 20) & 31)::int + 1, 1)
        || substr(a, ((ms >> 15) & 31)::int + 1, 1) || substr(a, ((ms >> 10) & 31)::int + 1, 1)
        || substr(a, ((ms >> 5) & 31)::int + 1, 1) || substr(a, (ms & 31)::int + 1, 1)
        || translate(substr(encode(decode(md5(seed), 'hex'), 'base64'), 1, 16),
                     'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', a || a)
    FROM (SELECT '0123456789abcdefghjkmnpqrstvwxyz'::text AS a) alphabet
$$;

CREATE TEMP TABLE seed_apps AS
    SELECT id, (row_number() OVER (ORDER BY id) - 1)::int AS idx FROM unnest(:'apps'::text[]) AS id;
CREATE TEMP TABLE seed_clock AS
    SELECT (extract(epoch FROM now()) * 1000)::bigint AS now_ms, :days::bigint * 86400000 AS span_ms,
           :users::bigint AS users, (SELECT count(*) FROM seed_apps)::int AS apps;

-- User n signed up at a time proportional to n (oldest first), in app n mod apps.
INSERT INTO users (app_id, uid, email, email_verified, password_hash, created_at, updated_at)
SELECT a.id, 'usr_' || pg_temp.seed_ulid(c.now_ms - c.span_ms + n * c.span_ms / c.users, 'u' || n),
       'seed-' || n || '@example.com', n % 3 <> 0,
       '$argon2id$v=19$m=19456,t=2,p=1$' || rtrim(encode(decode(md5('s' || n), 'hex'), 'base64'), '=')
           || '$' || rtrim(encode(sha256(('h' || n)::bytea), 'base64'), '='),
       to_timestamp((c.now_ms - c.span_ms + n * c.span_ms / c.users) / 1000.0),
       to_timestamp((c.now_ms - c.span_ms + n * c.span_ms / c.users) / 1000.0)
FROM seed_clock c, generate_series(0, :users - 1) AS n
JOIN seed_apps a ON a.idx = n % (SELECT apps FROM seed_clock);

-- Session s belongs to user s / :sessions_per_user and began after that user signed up; it was
-- last refreshed within the last day, so it is live and its refresh token too.
CREATE TEMP TABLE seed_sessions AS
SELECT a.id AS app_id, s,
       'usr_' || pg_temp.seed_ulid(c.now_ms - c.span_ms + u * c.span_ms / c.users, 'u' || u) AS uid,
       c.now_ms - c.span_ms + u * c.span_ms / c.users + (s % :sessions_per_user + 1) * 60000 AS created_ms,
       c.now_ms - 1000 - (hashtext('seen' || s)::bigint & 67108863) AS seen_ms
FROM seed_clock c, generate_series(0, :users * :sessions_per_user - 1) AS s,
     LATERAL (SELECT s / :sessions_per_user AS u) user_of
JOIN seed_apps a ON a.idx = u % (SELECT apps FROM seed_clock)
ORDER BY created_ms;

INSERT INTO sessions (app_id, id, uid, amr, ip, user_agent, created_at, last_seen_at, expires_at,
                      command_key, created_account, aal)
SELECT app_id, 'ses_' || pg_temp.seed_ulid(created_ms, 's' || s), uid, '{pwd}',
       (10 + s % 200) || '.' || (s / 7 % 250) || '.' || (s / 11 % 250) || '.' || (s % 250 + 1),
       (ARRAY['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
              'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
              'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
              'MyApp/4.2.1 (Android 14; Pixel 8)'])[s % 4 + 1],
       to_timestamp(created_ms / 1000.0), to_timestamp(seen_ms / 1000.0),
       to_timestamp(seen_ms / 1000.0) + interval '90 days',
       -- The command key (a message id and the SHA-256 of the command's body), hashed with the app.
       sha256(convert_to(app_id || ':' || pg_temp.seed_ulid(created_ms, 'm' || s) || '.'
                         || encode(sha256(('b' || s)::bytea), 'hex'), 'UTF8')),
       s % :sessions_per_user = 0, 1
FROM seed_sessions;

INSERT INTO refresh_tokens (app_id, token_hash, session_id, created_at, expires_at)
SELECT app_id, sha256(('rt' || s || random())::bytea), 'ses_' || pg_temp.seed_ulid(created_ms, 's' || s),
       to_timestamp(seen_ms / 1000.0), to_timestamp(seen_ms / 1000.0) + interval '90 days'
FROM seed_sessions ORDER BY seen_ms;

DROP TABLE seed_sessions;
ANALYZE users;
ANALYZE sessions;
ANALYZE refresh_tokens;
