//! Compiles the protobuf definitions with protox (no system protoc) into
//! tonic clients and servers.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/tfplugin5.proto",
        "proto/tfplugin6.proto",
        "proto/grpc_controller.proto",
        "proto/health.proto",
        "proto/fleetform.proto",
    ];
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = protox::compile(files, ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
