// PCRE2 with 8-bit code units (UTF-8), the width Sift's strings are matched in.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
