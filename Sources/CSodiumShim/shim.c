// Argon2id's working memory, kept between hashes instead of mapped and unmapped for each.
//
// libsodium (1.0.18, Debian 12) gives every crypto_pwhash call its own
// mmap(MAP_ANONYMOUS | MAP_POPULATE) of the whole cost (19 MiB at OWASP's m=19456) and munmaps it
// after. The kernel then faults in, zeroes and tears down 4,864 pages per hash, with a TLB
// shootdown to the process's other cores at each munmap: under `perf`, 40 % of a hashing
// thread's CPU was in the kernel (sign-in: 11.9 ms of kernel beside 15.0 ms of libsodium per
// request). libsodium has no allocation hook, so this file defines `mmap` and `munmap`
// themselves: the dynamic linker binds libsodium's calls to the executable's definitions
// first. Outside a hash (the thread-local `inside_hash`, set only around libsodium's calls by
// PasswordHasher) every call goes straight to the system call, unchanged; inside one, an
// anonymous populated mapping of a length the pool holds is handed out from it, and its munmap
// gives it back.
//
// What a reused area holds: the previous hash's blocks. Argon2 never reads a block before it
// has written it in the same call (pass 0 references only blocks already filled), so a hash's
// result does not depend on what the area held; the blocks themselves are wiped on return
// (explicit_bzero), as libargon2 does, so no password-derived memory outlives its hash.
#define _GNU_SOURCE
#include "CSodiumShim.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MOST_AREAS 64

struct area {
    void *base;
    size_t length;
    int lent;
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct area pool[MOST_AREAS];
static int pool_size;        // areas in `pool` (lent or free)
static int keep_at_most;     // set by csodiumshim_hash_memory_keep_at_least
static long reuses;
static __thread int inside_hash;

static void *system_mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset) {
    return (void *)syscall(SYS_mmap, address, length, protection, flags, fd, offset);
}

static int system_munmap(void *address, size_t length) {
    return (int)syscall(SYS_munmap, address, length);
}

void csodiumshim_hash_memory_keep_at_least(int areas) {
    pthread_mutex_lock(&pool_lock);
    int wanted = areas > MOST_AREAS ? MOST_AREAS : areas;
    if (wanted > keep_at_most) keep_at_most = wanted;
    pthread_mutex_unlock(&pool_lock);
}

void csodiumshim_hash_memory_enter(void) { inside_hash = 1; }
void csodiumshim_hash_memory_leave(void) { inside_hash = 0; }

long csodiumshim_hash_memory_reuses(void) {
    pthread_mutex_lock(&pool_lock);
    long count = reuses;
    pthread_mutex_unlock(&pool_lock);
    return count;
}

// Only the shape of libsodium's call: a new private anonymous read-write populated mapping.
static int is_working_area(void *address, int protection, int flags, int fd) {
    int wanted = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE;
    return address == NULL && fd == -1 && protection == (PROT_READ | PROT_WRITE) && (flags & wanted) == wanted
        && (flags & (MAP_FIXED | MAP_SHARED)) == 0;
}

void *mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset) {
    if (!inside_hash || !is_working_area(address, protection, flags, fd)) {
        return system_mmap(address, length, protection, flags, fd, offset);
    }
    void *stale = NULL;
    size_t stale_length = 0;
    int slot = -1;
    pthread_mutex_lock(&pool_lock);
    for (int i = 0; i < pool_size; i++) {
        if (!pool[i].lent && pool[i].length == length) {
            pool[i].lent = 1;
            reuses++;
            pthread_mutex_unlock(&pool_lock);
            return pool[i].base;
        }
    }
    if (pool_size < keep_at_most) {
        slot = pool_size;
        pool[slot] = (struct area){.base = NULL, .length = 0, .lent = 1};
        __atomic_store_n(&pool_size, pool_size + 1, __ATOMIC_RELEASE);
    } else {
        // A full pool gives up a free area of another length (an imported hash's own cost) for
        // this one, so odd costs cannot starve the service's own.
        for (int i = 0; i < pool_size && slot < 0; i++) {
            if (!pool[i].lent) {
                slot = i;
                stale = pool[i].base;
                stale_length = pool[i].length;
                pool[i] = (struct area){.base = NULL, .length = 0, .lent = 1};
            }
        }
    }
    pthread_mutex_unlock(&pool_lock);
    if (stale) system_munmap(stale, stale_length);
    void *base = system_mmap(address, length, protection, flags, fd, offset);
    if (slot >= 0) {
        pthread_mutex_lock(&pool_lock);
        // A failed map leaves the slot empty and free: length 0 matches no request.
        pool[slot] = base == MAP_FAILED ? (struct area){.base = NULL, .length = 0, .lent = 0}
                                        : (struct area){.base = base, .length = length, .lent = 1};
        pthread_mutex_unlock(&pool_lock);
    }
    return base;
}

int munmap(void *address, size_t length) {
    // A process that never hashed (the pool is empty) unmaps as it always did, without the lock.
    if (__atomic_load_n(&pool_size, __ATOMIC_ACQUIRE) == 0) return system_munmap(address, length);
    pthread_mutex_lock(&pool_lock);
    for (int i = 0; i < pool_size; i++) {
        if (pool[i].lent && pool[i].base == address && pool[i].length == length) {
            pthread_mutex_unlock(&pool_lock);
            // Still lent while it is wiped: no other hash can take it half clean.
            explicit_bzero(address, length);
            pthread_mutex_lock(&pool_lock);
            pool[i].lent = 0;
            pthread_mutex_unlock(&pool_lock);
            return 0;
        }
    }
    pthread_mutex_unlock(&pool_lock);
    return system_munmap(address, length);
}
