// placeholder until the bench engine lands
namespace sp::bench {}
