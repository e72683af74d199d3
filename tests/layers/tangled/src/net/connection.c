#include "net/connection.h"
#include "pool.h"
