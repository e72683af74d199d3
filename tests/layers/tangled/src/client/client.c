#include "client/client.h"
#include "client/impl.h"
#include "net/connection.h"
