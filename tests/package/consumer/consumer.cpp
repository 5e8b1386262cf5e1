// A user's source file: labrun's public headers resolve from the installed package.
#include <labrun/dtype.hpp>
#include <labrun/point.hpp>

namespace consumer {
labrun::DType consumer_dtype() { return labrun::DType::f32; }
}  // namespace consumer
