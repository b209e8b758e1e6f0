/* A C consumer of the installed package, built with nothing but
 * `cc consumer.c $(pkg-config --cflags --libs zyfa)`: the header and the library it finds must
 * be the same version, and the library must answer calls. */
#include <stdio.h>
#include <string.h>

#include <zyfa/zyfa.h>

int main(void) {
  zyfa_handle_t h;
  zyfa_alignment_t rules = ZYFA_ALIGNMENT_INIT;
  if (strcmp(zyfa_version_string(), ZYFA_VERSION_STRING) != 0) {
    fprintf(stderr, "library %s, header %s\n", zyfa_version_string(), ZYFA_VERSION_STRING);
    return 1;
  }
  if (zyfa_create(&h) != ZYFA_STATUS_SUCCESS ||
      zyfa_backend_alignment(h, ZYFA_BACKEND_CPU, &rules) != ZYFA_STATUS_SUCCESS) {
    fprintf(stderr, "zyfa: %s\n", zyfa_last_error());
    return 1;
  }
  zyfa_destroy(h);
  printf("zyfa %s from C: cpu alignment q %u k %u v %u out %u\n", zyfa_version_string(), rules.q, rules.k,
         rules.v, rules.out);
  return 0;
}
