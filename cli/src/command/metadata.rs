//! `fleetform metadata functions -json`: the built-in functions' signatures
//! in Terraform's JSON format, from the language's signature table.

/// Prints the function signatures; without `-json` says, as Terraform
/// does, that the flag is required (exit status 1).
pub fn functions(json: bool) -> u8 {
    if !json {
        eprintln!(
            "The `fleetform metadata functions` command requires the `-json` flag.\n\n\
             Usage: fleetform [global options] metadata functions -json\n\n  \
             Prints out a json representation of the available function signatures."
        );
        return 1;
    }
    println!("{}", fleetform_lang::eval::function_metadata_json());
    0
}
