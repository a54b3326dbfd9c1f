/* The public header alone must compile as strict C99 (-std=c99 -pedantic -Werror). */
#include <deltakit/deltakit.h>

int dk_header_only_check(void);
int dk_header_only_check(void) { return (int)sizeof(dk_tensor) + (int)DK_STATUS_SUCCESS; }
