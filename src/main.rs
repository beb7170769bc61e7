/// mimalloc instead of glibc's malloc: the live source allocates and frees millions of
/// small objects (watch events decoded, parsed into the model, dropped). With glibc,
/// allocation was about a third of the client's CPU per watch event and its arenas kept
/// ≈ 250 MiB more resident than the heap on the 155k-object benchmark; mimalloc halves
/// the CPU per event and keeps RSS close to the heap (docs/source.md "Benchmark").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(gangplank::cli::main());
}
