#include "producer/producer.h"
#include "routing/router.h"
