#include "producer/pp.h"
