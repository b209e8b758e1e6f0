// A C++11 consumer of the installed package: zyfa/zyfa.hpp must compile with -std=c++11
// -pedantic -Werror (and, from the same source with -std=c++98, stop with its own message).
#include <cstdio>
#include <string>
#include <utility>

#include <zyfa/zyfa.hpp>

int main() {
  zyfa::Handle a;
  zyfa::Handle h(std::move(a));  // the moved-from handle is empty and destroys nothing
  const zyfa_backend_t b = h.resolve(ZYFA_BACKEND_CPU);
  const zyfa_alignment_t rules = h.alignment(b);
  const zyfa_fwd_desc_t d = ZYFA_FWD_DESC_INIT;
  const zyfa::Status st = h.try_fwd(d);  // no tensors: refused, not thrown
  if (b != ZYFA_BACKEND_CPU || rules.backend != b || st || st.message.find("q.") == std::string::npos) {
    std::fprintf(stderr, "unexpected: backend %d, status %d \"%s\"\n", static_cast<int>(b),
                 static_cast<int>(st.code), st.message.c_str());
    return 1;
  }
  std::printf("zyfa %s from C++ %ld: %s\n", zyfa_version_string(), static_cast<long>(__cplusplus),
              st.message.c_str());
  return 0;
}
