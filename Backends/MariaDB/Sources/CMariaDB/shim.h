// Debian keeps Connector/C's headers in /usr/include/mariadb; pkg-config libmariadb adds that folder.
#include <mysql.h>
#include <errmsg.h>
#include <mysqld_error.h>
