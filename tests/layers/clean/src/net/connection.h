#include "wire/frame.h"
/* a connection tells its owner it closed through a callback:
#include "net/pool.h" would be a cycle */
