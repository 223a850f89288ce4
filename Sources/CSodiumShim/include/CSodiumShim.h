#ifndef CSODIUMSHIM_H
#define CSODIUMSHIM_H

/// Argon2id's working memory, kept between hashes (shim.c says why and how).
///
/// `csodiumshim_hash_memory_keep_at_least(n)`: up to `n` working areas (or more, if an earlier
/// call asked for more) are kept mapped for reuse: a hasher's bound on concurrent hashes.
/// `enter`/`leave` bracket one libsodium hash or check on the calling thread: only inside them
/// is a mapping taken from the pool.
void csodiumshim_hash_memory_keep_at_least(int areas);
void csodiumshim_hash_memory_enter(void);
void csodiumshim_hash_memory_leave(void);
/// How many hashes took their working area from the pool so far: the unit test's evidence that
/// a hash reused an earlier one's memory.
long csodiumshim_hash_memory_reuses(void);

#endif
