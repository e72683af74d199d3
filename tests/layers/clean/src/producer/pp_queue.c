#include "producer/pp_internal.h"
