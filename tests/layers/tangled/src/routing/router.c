#include "common/buf.h"
#include "PulsarApi.pb-c.h"
