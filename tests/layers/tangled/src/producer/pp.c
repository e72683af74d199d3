#include "producer/pp.h"
#include "client/client.h"
