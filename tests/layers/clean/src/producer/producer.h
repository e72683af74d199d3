#include "net/pool.h"
#include "PulsarApi.pb-c.h"
