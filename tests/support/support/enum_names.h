// The printed name of an enumerator from a table in enumerator order ("?" out of range).
#pragma once

#include <cstddef>

namespace zyfa::test {

template <typename E, size_t N>
const char* enum_name(E e, const char* const (&names)[N]) {
  const size_t i = static_cast<size_t>(e);
  return i < N ? names[i] : "?";
}

}  // namespace zyfa::test
