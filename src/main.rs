fn main() {
    std::process::exit(gangplank::cli::main());
}
