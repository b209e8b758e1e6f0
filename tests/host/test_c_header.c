/* Compiles the public header as strict C11 and exercises the C-only conveniences. */
#include <stdio.h>
#include <string.h>

#include "zyfa/zyfa.h"

int main(void) {
  zyfa_fwd_desc_t desc = ZYFA_FWD_DESC_INIT;
  zyfa_quantize_desc_t qdesc = ZYFA_QUANTIZE_DESC_INIT;
  zyfa_handle_t h = NULL;
  zyfa_status_t st;
  if (desc.struct_size != sizeof(zyfa_fwd_desc_t) || desc.causal != 1) return 1;
  if (qdesc.struct_size != sizeof(zyfa_quantize_desc_t)) return 2;
  if (zyfa_create(&h) != ZYFA_STATUS_SUCCESS) return 3;
  /* An empty descriptor must be refused with a message naming the first missing field. */
  st = zyfa_fwd(h, &desc);
  if (st != ZYFA_STATUS_INVALID_ARGUMENT || strstr(zyfa_last_error(), "q.data") == NULL) {
    fprintf(stderr, "unexpected: %s: %s\n", zyfa_status_string(st), zyfa_last_error());
    return 4;
  }
  if (strcmp(zyfa_version_string(), ZYFA_VERSION_STRING) != 0) return 5;
  zyfa_destroy(h);
  puts("C header ok");
  return 0;
}
