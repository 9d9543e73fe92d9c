// The PostgreSQL client library (libpq), found through pkg-config (libpq), whose cflags point at
// the directory holding libpq-fe.h (/usr/include/postgresql on Debian); see scripts/install-deps.sh.
#include <libpq-fe.h>
