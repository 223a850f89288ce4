// libxcrypt (Debian's libcrypt): crypt_rn for imported bcrypt hashes ($2a$, $2b$, $2y$).
#include <crypt.h>
