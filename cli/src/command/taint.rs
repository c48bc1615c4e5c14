//! `taint ADDRESS` and `untaint ADDRESS`: marks an object to be replaced
//! by the next apply, or takes the mark off.

use crate::client::{self, Client};

pub async fn taint(client: &mut Client, ws: &str, address: &str) -> anyhow::Result<u8> {
    client::set_tainted(client, ws, address, true).await?;
    println!("Resource instance {address} has been marked as tainted.");
    Ok(0)
}

pub async fn untaint(client: &mut Client, ws: &str, address: &str) -> anyhow::Result<u8> {
    client::set_tainted(client, ws, address, false).await?;
    println!("Resource instance {address} has been successfully untainted.");
    Ok(0)
}
