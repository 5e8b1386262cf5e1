// The variant table row the integrity and audit test aids share: each aid lists its variants as rows of a name, the
// fault the variant plants and a description, and registers them (host and CUDA) from that one table.
#pragma once

namespace labrun::aids {

/// One row of an aid's variant table: the variant's name, its `Fault` (the aid's own enum) and what it does.
/// Plain data, usable in a constexpr table; nothing is checked or thrown.
template <class Fault>
struct VariantRow {
  const char* name;
  Fault fault;
  const char* description;
};

}  // namespace labrun::aids
