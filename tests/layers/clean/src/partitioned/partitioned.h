#include "net/pool.h"
