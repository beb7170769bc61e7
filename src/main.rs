/// mimalloc instead of glibc's malloc: the live source allocates and frees millions of
/// small objects (watch events decoded, parsed into the model, dropped). With glibc,
/// allocation was about a third of the client's CPU per watch event, and its arenas
/// kept ≈ 250 MiB more resident than the heap on the 155k-object benchmark. Built
/// with `no_thp`: with transparent huge pages on `madvise`, mimalloc's arenas were
/// backed by 2 MiB pages and RSS grew by half (docs/source.md "Benchmark").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(gangplank::cli::main());
}
