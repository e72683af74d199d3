#include "common/buf.h"
#include "client/client.h"
