// Debian keeps libpq-fe.h in /usr/include/postgresql; pkg-config libpq adds that folder.
#include <libpq-fe.h>
