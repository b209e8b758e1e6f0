// The one source of libzyfa.so itself; everything else comes from zyfa_internal.
#include "zyfa/zyfa.h"

extern "C" ZYFA_API const char* zyfa_version_string(void) { return ZYFA_VERSION_STRING; }
