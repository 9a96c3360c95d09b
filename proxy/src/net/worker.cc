// placeholder
namespace sp::net {}
