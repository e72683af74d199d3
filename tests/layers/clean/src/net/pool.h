#include "connection.h"
