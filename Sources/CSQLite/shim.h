// The SQLite C API, found through pkg-config (sqlite3); see scripts/install-deps.sh.
#include <sqlite3.h>
