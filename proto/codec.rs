//! The codec of every generated client and server: prost's, except that a request body that is
//! not a valid message of its method answers `INVALID_ARGUMENT` (the client sent it wrong)
//! instead of tonic's default `INTERNAL` (which tells a bot author the server broke).

use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder};
use tonic::{Code, Status};
use tonic_prost::ProstCodec;

/// Prost's codec with clear decode errors (see the file's header).
pub struct ClearCodec<T, U>(ProstCodec<T, U>);

impl<T, U> Default for ClearCodec<T, U> {
    fn default() -> Self {
        ClearCodec(ProstCodec::default())
    }
}

impl<T, U> Codec for ClearCodec<T, U>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = <ProstCodec<T, U> as Codec>::Encoder;
    type Decoder = ClearDecoder<<ProstCodec<T, U> as Codec>::Decoder>;

    fn encoder(&mut self) -> Self::Encoder {
        self.0.encoder()
    }

    fn decoder(&mut self) -> Self::Decoder {
        ClearDecoder(self.0.decoder())
    }
}

/// Prost's decoder, its `INTERNAL` decode errors turned into `INVALID_ARGUMENT`.
pub struct ClearDecoder<D>(D);

impl<D: Decoder<Error = Status>> Decoder for ClearDecoder<D> {
    type Item = D::Item;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<D::Item>, Status> {
        self.0.decode(src).map_err(|status| match status.code() {
            Code::Internal => Status::invalid_argument(format!(
                "the message is not a valid protobuf message for this method ({}): build it from proto/*.proto",
                status.message()
            )),
            _ => status,
        })
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.0.buffer_settings()
    }
}
