//! The sled log's write-ahead journal: what makes a group-commit batch durable.
//!
//! Why: a `sled::Db::flush` per batch cost about a third of the server's CPU per action
//! (sled 0.34 writes through its IO thread pool and wakes all seven of its idle threads for
//! every write; docs/performance.md). Now each batch is inserted into sled's memory, written
//! to this journal as one entry and made durable by one `fdatasync` on the flusher's own
//! thread; sled itself is flushed only at a *checkpoint*, when the journal is full (or before
//! a game is deleted, and at shutdown). After a crash, opening the store writes the journal's
//! entries into sled again (inserts of the same keys and bytes: harmless if sled had them).
//!
//! # Format
//! One file, `journal`, in the data dir, overwritten in place lap after lap (never more than
//! [`CAPACITY`]; grown with zeros a step at a time so that a sync writes data, not metadata).
//! An entry: magic (u32), generation (u64), payload length (u32), CRC-32 of the generation and
//! the payload (u32), then the payload; integers little-endian. A reader takes the entries
//! from offset 0 while they are whole, their CRC matches and their generation is the one
//! sled holds (`journal_generation`, bumped at every checkpoint once sled is flushed): the
//! entries of earlier laps, already in sled, are never read again, and a torn last entry
//! (never acknowledged: it is acknowledged after its sync) ends the journal.
//!
//! A bad entry followed by whole entries of the same generation is not a torn tail but
//! damage (a bad sector, a flipped bit): every entry after it was acknowledged. Reading goes
//! on past it (by its length if that still leads to a whole entry, else by scanning for the
//! next entry's magic, generation and CRC) and reports where it is and which game ids are
//! still legible in it; the store decides what that costs (`sled.rs`, `journal_damage.rs`).
//!
//! The payload is what the flusher wrote to sled for a batch: per append, the game id, its
//! records (seq and stored bytes) and its directory-feed positions (seq and position).
//!
//! # Direct writes
//! On Linux the entries are written with `O_DIRECT`, whole 4 KB blocks from the start of the
//! block the entry begins in: the bytes of earlier entries in that block (kept in memory, as
//! they are on disk) and zeros after the entry. The page cache's writeback was most of a sync's
//! cost (docs/performance.md, "The journal written directly"). The zeros overwrite only what
//! lies after the last entry, which is of an earlier lap or zeros already. A filesystem that
//! refuses `O_DIRECT` (tmpfs, for one) gets buffered writes, as does one that refuses a direct
//! write later; `fdatasync` follows each write either way.

use super::RecordBytes;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Largest journal: reached, sled is flushed and the journal starts over (a checkpoint). A
/// multiple of [`BLOCK`], so that direct writes never grow the file past it.
pub const CAPACITY: u64 = 16 << 20;
/// The file grows by zeros in steps of this much (a write into allocated blocks syncs faster).
const GROW: u64 = 1 << 20;
/// The unit of a direct write, in the file and in memory: 4 KB (no disk's block is larger here).
const BLOCK: u64 = 4096;
const MAGIC: u32 = 0x314c_4e4a; // "JNL1"
const HEADER: usize = 4 + 8 + 4 + 4;
pub const FILE_NAME: &str = "journal";

/// What one batch writes for one game (to sled, and to the journal).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JournaledAppend {
    pub game_id: String,
    /// `(seq, the record's stored bytes)`.
    pub records: Vec<(u64, RecordBytes)>,
    /// `(seq, directory-feed position)`.
    pub marked: Vec<(u64, u64)>,
}

/// The open journal: the flusher's alone.
pub struct Journal {
    file: File,
    /// The same file opened for direct writes, while the filesystem takes them.
    direct: Option<File>,
    capacity: u64,
    generation: u64,
    /// Where the next entry goes.
    offset: u64,
    /// The file's length: blocks written (zeros or entries).
    allocated: u64,
    /// The bytes of the block `offset` is in, before `offset`: a direct write starts with them
    /// (kept up to date while the journal is written directly; buffered is for good).
    tail: Vec<u8>,
    /// Where a direct write is put together (aligned, reused).
    out: AlignedBuffer,
}

/// An entry too large for what is left of the journal: checkpoint instead.
#[derive(Debug)]
pub struct Full;

impl Journal {
    /// Opens (or creates) the journal in `dir` and answers what it holds of `generation`: the
    /// batches, in the order they were written, and any damage or torn tail found on the way.
    /// Nothing is written: the journal's next entry goes after the last whole one.
    pub fn open(dir: &Path, generation: u64) -> io::Result<(Journal, Replayed)> {
        Journal::open_with_capacity(dir, generation, CAPACITY)
    }

    fn open_with_capacity(
        dir: &Path,
        generation: u64,
        capacity: u64,
    ) -> io::Result<(Journal, Replayed)> {
        Journal::open_with(dir, generation, capacity, true)
    }

    fn open_with(
        dir: &Path,
        generation: u64,
        capacity: u64,
        try_direct: bool,
    ) -> io::Result<(Journal, Replayed)> {
        let path = dir.join(FILE_NAME);
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let replayed = read_entries(&bytes, generation);
        let end = replayed.end;
        let direct = if try_direct { open_direct(&path) } else { None };
        let journal = Journal {
            file,
            direct,
            capacity,
            generation,
            offset: end as u64,
            allocated: bytes.len() as u64,
            tail: bytes[block_start(end as u64) as usize..end].to_vec(),
            out: AlignedBuffer::default(),
        };
        Ok((journal, replayed))
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Writes one batch and syncs it: once this answers `Ok`, the batch survives a crash.
    pub fn write(&mut self, appends: &[JournaledAppend]) -> io::Result<Result<(), Full>> {
        let entry = encode_entry(self.generation, appends);
        let end = self.offset + entry.len() as u64;
        if end > self.capacity {
            return Ok(Err(Full));
        }
        // A direct write covers whole blocks: the file holds them before the sync, so that
        // the sync writes data, not the file's length.
        let written_end = if self.direct.is_some() {
            end.next_multiple_of(BLOCK)
        } else {
            end
        };
        if written_end > self.allocated {
            let grown = end
                .next_multiple_of(GROW)
                .min(self.capacity)
                .max(written_end);
            let zeros = vec![0u8; (grown - self.allocated) as usize];
            self.file.write_all_at(&zeros, self.allocated)?;
            self.allocated = grown;
        }
        if let Some(direct) = &self.direct {
            if let Err(e) = write_direct(direct, &mut self.out, &mut self.tail, self.offset, &entry)
            {
                // Whatever part of the blocks was written holds the same bytes as the buffered
                // write below; from now on the journal is written through the cache.
                tracing::warn!("the journal's direct write failed ({e}): writing it buffered");
                self.direct = None;
            }
        }
        if self.direct.is_none() {
            self.file.write_all_at(&entry, self.offset)?;
        }
        self.file.sync_data()?;
        self.offset = end;
        Ok(Ok(()))
    }

    /// Bytes written in this lap (the checkpoint policy reads it).
    pub fn len(&self) -> u64 {
        self.offset
    }

    /// After a checkpoint (sled flushed, then `generation` stored in sled and flushed): the
    /// entries written so far are never read again; the next goes to offset 0.
    pub fn start_over(&mut self, generation: u64) {
        self.generation = generation;
        self.offset = 0;
        self.tail.clear();
    }

    /// Whether entries are written directly (the filesystem took `O_DIRECT`).
    pub fn writes_directly(&self) -> bool {
        self.direct.is_some()
    }
}

/// Writes `entry` at `offset` as whole blocks from the start of the block it begins in: `tail`
/// (the bytes of that block before `offset`), the entry, zeros to the last block's end. Then
/// `tail` is what the next entry's first block starts with.
fn write_direct(
    direct: &File,
    out: &mut AlignedBuffer,
    tail: &mut Vec<u8>,
    offset: u64,
    entry: &[u8],
) -> io::Result<()> {
    let start = block_start(offset);
    let end = offset + entry.len() as u64;
    let blocks = out.get((end.next_multiple_of(BLOCK) - start) as usize);
    let (before, rest) = blocks.split_at_mut(tail.len());
    before.copy_from_slice(tail);
    rest[..entry.len()].copy_from_slice(entry);
    rest[entry.len()..].fill(0);
    direct.write_all_at(blocks, start)?;
    tail.clear();
    tail.extend_from_slice(&blocks[(block_start(end) - start) as usize..(end - start) as usize]);
    Ok(())
}

/// The start of the block `offset` is in.
fn block_start(offset: u64) -> u64 {
    offset - offset % BLOCK
}

/// The journal opened for direct writes, or `None` where the system or the filesystem has no
/// such thing (the journal is then written through the page cache).
#[cfg(target_os = "linux")]
fn open_direct(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(|e| tracing::debug!("the journal is written buffered: no O_DIRECT here ({e})"))
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn open_direct(_path: &Path) -> Option<File> {
    None
}

/// Memory for a direct write: its address a multiple of [`BLOCK`], as `O_DIRECT` requires.
/// A `Vec` one block larger than asked, used from its first aligned byte (no `unsafe`).
#[derive(Default)]
struct AlignedBuffer {
    bytes: Vec<u8>,
}

impl AlignedBuffer {
    /// `len` bytes at an aligned address (what an earlier write left there).
    fn get(&mut self, len: usize) -> &mut [u8] {
        let needed = len + BLOCK as usize;
        if self.bytes.len() < needed {
            self.bytes = vec![0; needed];
        }
        let skip = self.bytes.as_ptr().align_offset(BLOCK as usize);
        &mut self.bytes[skip..skip + len]
    }
}

fn encode_entry(generation: u64, appends: &[JournaledAppend]) -> Vec<u8> {
    let mut entry = Vec::new();
    entry.extend_from_slice(&MAGIC.to_le_bytes());
    entry.extend_from_slice(&generation.to_le_bytes());
    entry.extend_from_slice(&[0; 8]); // the payload's length and CRC, below
    entry.extend_from_slice(&(appends.len() as u32).to_le_bytes());
    for append in appends {
        entry.extend_from_slice(&(append.game_id.len() as u16).to_le_bytes());
        entry.extend_from_slice(append.game_id.as_bytes());
        entry.extend_from_slice(&(append.records.len() as u32).to_le_bytes());
        for (seq, bytes) in &append.records {
            entry.extend_from_slice(&seq.to_le_bytes());
            entry.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            entry.extend_from_slice(bytes);
        }
        entry.extend_from_slice(&(append.marked.len() as u32).to_le_bytes());
        for (seq, position) in &append.marked {
            entry.extend_from_slice(&seq.to_le_bytes());
            entry.extend_from_slice(&position.to_le_bytes());
        }
    }
    let payload_len = (entry.len() - HEADER) as u32;
    let crc = checksum(generation, &entry[HEADER..]);
    entry[12..16].copy_from_slice(&payload_len.to_le_bytes());
    entry[16..20].copy_from_slice(&crc.to_le_bytes());
    entry
}

fn checksum(generation: u64, payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&generation.to_le_bytes());
    hasher.update(payload);
    hasher.finalize()
}

/// What a journal holds of one generation, as [`read_entries`] found it.
#[derive(Debug, Default)]
pub struct Replayed {
    /// The batches of every whole entry, in the order written.
    pub appends: Vec<JournaledAppend>,
    /// Where the next entry goes: after the last whole entry.
    pub end: usize,
    /// Bytes that do not read back as entries although whole entries of the same generation
    /// follow them: damage (a bad sector, a flipped bit), not a crash. In file order.
    pub damage: Vec<Damage>,
    /// A bad *last* entry (offset, bytes up to the next non-entry or the end): torn by a crash
    /// mid-write, never acknowledged (an entry is acknowledged after its sync).
    pub torn: Option<(u64, u64)>,
}

/// One damaged region of a journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    pub offset: u64,
    /// Its length; for a cut, what is left of the file after `offset`.
    pub len: u64,
    /// How many of [`Replayed::appends`] come from entries before the region.
    pub appends_before: usize,
    /// The appends still legible in the damaged bytes (a payload decoded as far as its shape
    /// holds, ignoring its CRC), as (game id, first seq): their records there cannot be
    /// trusted, but the games were there. Only well-formed ids (16 lowercase hex characters).
    pub legible: Vec<(String, u64)>,
    /// Whether `legible` is the whole region: one payload whose shape holds to its last byte
    /// (a damaged header or a damaged record, not damaged lengths). Then no other game had
    /// records there, unless a damaged id reads as another well-formed one (the store checks
    /// that each legible append follows its game's log).
    pub complete: bool,
    /// The file ends inside the journal's data, at a length no write leaves (not a multiple
    /// of [`BLOCK`]): cut by something outside; what followed is gone, whoever it belonged to.
    pub cut: bool,
}

/// What lies at one offset of the journal.
enum Found {
    /// A whole entry of the generation: its length (header included) and batches.
    Entry(usize, Vec<JournaledAppend>),
    /// The header of an entry of the generation whose payload does not check out: its length
    /// as the header says (may itself be damaged).
    Bad(usize),
    /// Anything else: zeros, an earlier lap's entry, the end of the file.
    Nothing,
}

fn entry_at(bytes: &[u8], at: usize, generation: u64) -> Found {
    let Some(header) = bytes.get(at..at + HEADER) else {
        return Found::Nothing;
    };
    let magic = u32::from_le_bytes(header[0..4].try_into().expect("4 bytes"));
    let entry_generation = u64::from_le_bytes(header[4..12].try_into().expect("8 bytes"));
    let len = u32::from_le_bytes(header[12..16].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(header[16..20].try_into().expect("4 bytes"));
    if magic != MAGIC || entry_generation != generation {
        return Found::Nothing;
    }
    let Some(payload) = bytes.get(at + HEADER..at + HEADER + len) else {
        return Found::Bad(HEADER + len);
    };
    if checksum(generation, payload) != crc {
        return Found::Bad(HEADER + len);
    }
    // A payload whose CRC matched but whose shape does not (never written by this code) is
    // as bad as a damaged one.
    match decode_payload(payload) {
        Some(decoded) => Found::Entry(HEADER + len, decoded),
        None => Found::Bad(HEADER + len),
    }
}

/// The first whole entry of `generation` at or after `from` (the damage's end), if any.
fn next_entry(bytes: &[u8], from: usize, generation: u64) -> Option<usize> {
    let magic = MAGIC.to_le_bytes();
    let mut at = from;
    while at + HEADER <= bytes.len() {
        let step = bytes[at..].iter().position(|&b| b == magic[0])?;
        at += step;
        if bytes.get(at..at + 4) == Some(&magic[..])
            && matches!(entry_at(bytes, at, generation), Found::Entry(..))
        {
            return Some(at);
        }
        at += 1;
    }
    None
}

/// The entries of `generation` in `bytes`, read past damage: a bad entry whose length still
/// leads to a whole entry is skipped; otherwise reading resynchronises on the next whole
/// entry of the generation (its magic, generation and CRC).
///
/// A bad entry that no whole entry follows is a torn tail (the journal ends before it): a
/// crash mid-write and a damaged last entry look alike. Unless the file was cut: its length
/// is one no write leaves, and it ends inside the journal's data (the cut is damage: what
/// followed it is gone, whoever it belonged to).
fn read_entries(bytes: &[u8], generation: u64) -> Replayed {
    let mut replayed = Replayed::default();
    let mut at = 0;
    loop {
        let bad_len = match entry_at(bytes, at, generation) {
            Found::Entry(len, decoded) => {
                replayed.appends.extend(decoded);
                at += len;
                replayed.end = at;
                continue;
            }
            Found::Bad(len) => Some(len),
            Found::Nothing => None,
        };
        // The header's length first (a payload damaged in place), then a scan.
        let resumed = bad_len
            .map(|len| at + len)
            .filter(|&next| matches!(entry_at(bytes, next, generation), Found::Entry(..)))
            .or_else(|| next_entry(bytes, at + 1, generation));
        if let Some(next) = resumed {
            let (legible, complete) = legible(&bytes[(at + HEADER).min(next)..next]);
            replayed.damage.push(Damage {
                offset: at as u64,
                len: (next - at) as u64,
                appends_before: replayed.appends.len(),
                legible,
                complete,
                cut: false,
            });
            at = next;
            continue;
        }
        // The file grows by whole blocks (zeros first, then entries): a length that is not a
        // multiple of one was made by a cut, not by a crash.
        let rest = &bytes[at..];
        let mut entry_start = MAGIC.to_le_bytes().to_vec();
        entry_start.extend_from_slice(&generation.to_le_bytes());
        let seen = rest.len().min(entry_start.len());
        let cut =
            !(bytes.len() as u64).is_multiple_of(BLOCK) && rest[..seen] == entry_start[..seen];
        if cut {
            let (legible, _) = legible(rest.get(HEADER..).unwrap_or_default());
            replayed.damage.push(Damage {
                offset: at as u64,
                len: rest.len() as u64,
                appends_before: replayed.appends.len(),
                legible,
                complete: false,
                cut,
            });
        } else if let Some(len) = bad_len {
            let torn_end = (at + len).min(bytes.len());
            replayed.torn = Some((at as u64, (torn_end - at) as u64));
        }
        return replayed;
    }
}

/// Reads one append as [`Journal::write`] lays it out (id, records, feed positions), handing
/// each record and each feed position on; its id.
fn read_append<'a>(
    reader: &mut Reader<'a>,
    mut record: impl FnMut(u64, &'a [u8]),
    mut mark: impl FnMut(u64, u64),
) -> Option<&'a [u8]> {
    let id_len = reader.u16()? as usize;
    let id = reader.bytes(id_len)?;
    for _ in 0..reader.u32()? {
        let seq = reader.u64()?;
        let len = reader.u32()? as usize;
        record(seq, reader.bytes(len)?);
    }
    for _ in 0..reader.u32()? {
        mark(reader.u64()?, reader.u64()?);
    }
    Some(id)
}

/// The appends a damaged payload still shows, decoded as far as its shape holds, and whether
/// the shape held to its last byte. Only well-formed ids (16 lowercase hex characters) are
/// kept: a damaged one names no game.
fn legible(payload: &[u8]) -> (Vec<(String, u64)>, bool) {
    let mut found = Vec::new();
    let mut reader = Reader(payload);
    let Some(count) = reader.u32() else {
        return (found, false);
    };
    let mut whole = count > 0;
    for _ in 0..count.min(1 << 16) {
        let mut first = None;
        let record = |seq: u64, _: &[u8]| {
            first.get_or_insert(seq);
        };
        let Some(id) = read_append(&mut reader, record, |_, _| {}) else {
            whole = false;
            break;
        };
        let well_formed = id.len() == super::GAME_ID_LEN
            && id
                .iter()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b));
        match (well_formed, first) {
            (true, Some(first)) => {
                found.push((String::from_utf8_lossy(id).into_owned(), first));
            }
            (true, None) => {}
            (false, _) => whole = false,
        }
    }
    (found, whole && count <= 1 << 16 && reader.0.is_empty())
}

/// A payload's batches, or `None` if it is not shaped as this code writes them.
fn decode_payload(payload: &[u8]) -> Option<Vec<JournaledAppend>> {
    let mut reader = Reader(payload);
    let count = reader.u32()?;
    let mut appends = Vec::new();
    for _ in 0..count {
        let (mut records, mut marked) = (Vec::new(), Vec::new());
        let id = read_append(
            &mut reader,
            |seq, bytes| records.push((seq, bytes.into())),
            |seq, position| marked.push((seq, position)),
        )?;
        appends.push(JournaledAppend {
            game_id: String::from_utf8(id.to_vec()).ok()?,
            records,
            marked,
        });
    }
    reader.0.is_empty().then_some(appends)
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.bytes(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn append(
        id: &str,
        seqs: std::ops::RangeInclusive<u64>,
        marked: &[(u64, u64)],
    ) -> JournaledAppend {
        JournaledAppend {
            game_id: id.to_string(),
            records: seqs
                .map(|s| (s, vec![s as u8; 10 + s as usize].into()))
                .collect(),
            marked: marked.to_vec(),
        }
    }

    fn write(journal: &mut Journal, batch: &[JournaledAppend]) -> Result<(), Full> {
        journal.write(batch).expect("disk")
    }

    #[test]
    fn batches_written_are_read_back_in_order_after_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let (mut journal, found) = Journal::open(dir.path(), 0).unwrap();
        assert!(found.appends.is_empty());
        let first = vec![append("aaaa", 1..=3, &[(1, 1)]), append("bbbb", 1..=1, &[])];
        let second = vec![append("aaaa", 4..=4, &[(4, 2)])];
        write(&mut journal, &first).unwrap();
        write(&mut journal, &second).unwrap();
        drop(journal);
        let (journal, found) = Journal::open(dir.path(), 0).unwrap();
        assert_eq!(found.appends, [first, second].concat());
        assert!(journal.len() > 0);
        // The file was grown with zeros: the entries end well before its end.
        let on_disk = std::fs::metadata(dir.path().join(FILE_NAME)).unwrap().len();
        assert_eq!(on_disk, GROW);
    }

    const X: &str = "00000000000000aa";
    const Y: &str = "00000000000000bb";

    /// Three entries in generation 7 (X 1-2; X 3 and Y 1; X 4), the file's bytes and where
    /// each entry starts.
    fn three_entries(dir: &Path) -> (Vec<Vec<JournaledAppend>>, Vec<u8>, Vec<usize>) {
        let (mut journal, _) = Journal::open(dir, 7).unwrap();
        let batches = vec![
            vec![append(X, 1..=2, &[])],
            vec![append(X, 3..=3, &[]), append(Y, 1..=1, &[])],
            vec![append(X, 4..=4, &[])],
        ];
        let mut starts = Vec::new();
        for batch in &batches {
            starts.push(journal.len() as usize);
            write(&mut journal, batch).unwrap();
        }
        starts.push(journal.len() as usize);
        drop(journal);
        (batches, std::fs::read(dir.join(FILE_NAME)).unwrap(), starts)
    }

    fn reopened(dir: &Path, bytes: &[u8]) -> (Journal, Replayed) {
        std::fs::write(dir.join(FILE_NAME), bytes).unwrap();
        Journal::open(dir, 7).unwrap()
    }

    #[test]
    fn a_damaged_payload_in_the_middle_is_skipped_and_reported_with_its_game_ids() {
        let dir = tempfile::tempdir().unwrap();
        let (batches, mut bytes, starts) = three_entries(dir.path());
        // One byte of the second entry's last record flipped (before the last append's count
        // of feed positions, 4 bytes): its lengths are intact.
        bytes[starts[2] - 6] ^= 0xff;
        let (journal, found) = reopened(dir.path(), &bytes);
        assert_eq!(found.appends, [&batches[0][..], &batches[2][..]].concat());
        assert_eq!(
            found.damage,
            vec![Damage {
                offset: starts[1] as u64,
                len: (starts[2] - starts[1]) as u64,
                appends_before: 1,
                legible: vec![(X.to_string(), 3), (Y.to_string(), 1)],
                complete: true,
                cut: false,
            }]
        );
        assert_eq!(found.torn, None);
        assert_eq!(journal.len(), starts[3] as u64, "nothing is overwritten");
    }

    #[test]
    fn a_damaged_length_or_a_sector_of_zeros_is_passed_by_scanning_for_the_next_entry() {
        let dir = tempfile::tempdir().unwrap();
        let (batches, bytes, starts) = three_entries(dir.path());
        // The second entry's length says more than the file holds.
        let mut long = bytes.clone();
        long[starts[1] + 15] = 0x7f;
        let (_, found) = reopened(dir.path(), &long);
        assert_eq!(found.appends, [&batches[0][..], &batches[2][..]].concat());
        assert_eq!(found.damage.len(), 1);
        assert_eq!(found.damage[0].offset, starts[1] as u64);
        assert_eq!(found.damage[0].len, (starts[2] - starts[1]) as u64);
        assert_eq!(
            found.damage[0].legible,
            vec![(X.to_string(), 3), (Y.to_string(), 1)],
            "the payload is whole"
        );
        assert!(found.damage[0].complete);
        // Zeros from inside the first entry to inside the second: both are damage, the third
        // is read; no id of the second survives.
        let mut zeroed = bytes.clone();
        zeroed[starts[0] + HEADER + 2..starts[1] + HEADER + 2].fill(0);
        let (_, found) = reopened(dir.path(), &zeroed);
        assert_eq!(found.appends, batches[2]);
        assert_eq!(found.damage.len(), 1);
        assert_eq!(found.damage[0].offset, 0);
        assert_eq!(found.damage[0].len, starts[2] as u64);
        assert_eq!(found.damage[0].appends_before, 0);
        assert!(
            !found.damage[0].complete,
            "the first entry's payload is zeros"
        );
        // The magic of the first entry flipped: the scan finds the second.
        let mut no_magic = bytes;
        no_magic[0] ^= 0x01;
        let (_, found) = reopened(dir.path(), &no_magic);
        assert_eq!(found.appends, [&batches[1][..], &batches[2][..]].concat());
        assert_eq!(found.damage[0].offset, 0);
        assert_eq!(found.damage[0].legible, vec![(X.to_string(), 1)]);
        assert!(found.damage[0].complete, "only the header was damaged");
    }

    #[test]
    fn a_bad_last_entry_is_a_torn_tail_and_the_next_entry_goes_in_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let (batches, bytes, starts) = three_entries(dir.path());
        // The last entry's last bytes never written (zeros, as a crash mid-write leaves them).
        let mut torn = bytes.clone();
        torn[starts[3] - 6..starts[3]].fill(0);
        let (journal, found) = reopened(dir.path(), &torn);
        assert_eq!(found.appends, batches[..2].concat());
        assert!(found.damage.is_empty());
        assert_eq!(
            found.torn,
            Some((starts[2] as u64, (starts[3] - starts[2]) as u64))
        );
        assert_eq!(journal.len(), starts[2] as u64, "overwritten next");
        // Whole entries then zeros: neither torn nor damaged.
        let (_, found) = reopened(dir.path(), &bytes);
        assert_eq!(found.appends, batches.concat());
        assert!(found.damage.is_empty() && found.torn.is_none());
    }

    /// A file cut by something outside (a length no write leaves) inside the journal's data
    /// is damage: what followed the cut is gone, whoever it belonged to.
    #[test]
    fn a_file_cut_inside_the_entries_is_damage_and_a_cut_in_the_zeros_is_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (batches, bytes, starts) = three_entries(dir.path());
        for cut_at in [starts[3] - 2, starts[2], starts[2] + 7, HEADER + 5] {
            let (_, found) = reopened(dir.path(), &bytes[..cut_at]);
            let whole = starts.iter().filter(|&&s| s <= cut_at).count() - 1;
            assert_eq!(found.appends, batches[..whole].concat(), "cut at {cut_at}");
            assert_eq!(found.torn, None, "cut at {cut_at}");
            assert_eq!(found.damage.len(), 1, "cut at {cut_at}");
            assert!(found.damage[0].cut);
            assert_eq!(found.damage[0].offset, starts[whole] as u64);
            assert_eq!(found.damage[0].appends_before, found.appends.len());
        }
        let (_, found) = reopened(dir.path(), &bytes[..starts[3] + 100]);
        assert_eq!(found.appends, batches.concat());
        assert!(found.damage.is_empty() && found.torn.is_none());
    }

    #[test]
    fn entries_of_an_earlier_generation_are_never_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let (mut journal, _) = Journal::open(dir.path(), 0).unwrap();
        for seq in 1..=5 {
            write(&mut journal, &[append("aaaa", seq..=seq, &[])]).unwrap();
        }
        // A checkpoint: the next lap starts at 0 with generation 1, over shorter entries.
        journal.start_over(1);
        let newer = vec![append("cccc", 1..=1, &[])];
        write(&mut journal, &newer).unwrap();
        drop(journal);
        assert_eq!(Journal::open(dir.path(), 1).unwrap().1.appends, newer);
        // Before the new generation was stored (a crash mid-checkpoint), generation 0 reads
        // none of it either: the first entry is already of generation 1.
        assert!(Journal::open(dir.path(), 0).unwrap().1.appends.is_empty());
    }

    /// Entries of many sizes: several in one block, one ending on a block's edge, one
    /// spanning blocks. Written directly and buffered, the files hold the same entries, read
    /// back alike after each reopen, and a reopened journal goes on in the middle of a block
    /// without disturbing the entries before it there.
    #[test]
    fn direct_and_buffered_writes_leave_the_same_entries() {
        let batches: Vec<Vec<JournaledAppend>> = [1, 2, 30, 1, 200, 3, 90, 1]
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let first = 1 + 1000 * i as u64;
                vec![append("aaaa", first..=first + n - 1, &[(first, i as u64)])]
            })
            .collect();
        let mut files = Vec::new();
        for try_direct in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let open = || Journal::open_with(dir.path(), 3, CAPACITY, try_direct).unwrap();
            let (mut journal, _) = open();
            let mut ends = Vec::new();
            for (i, batch) in batches.iter().enumerate() {
                write(&mut journal, batch).unwrap();
                ends.push(journal.len());
                if i % 3 == 2 {
                    // Reopened mid-block: the next write starts from the tail read back.
                    drop(journal);
                    let found;
                    (journal, found) = open();
                    assert_eq!(
                        found.appends,
                        batches[..=i].concat(),
                        "direct: {try_direct}"
                    );
                }
            }
            if !try_direct {
                assert!(!journal.writes_directly());
            }
            let (journal, found) = open();
            assert_eq!(found.appends, batches.concat(), "direct: {try_direct}");
            assert_eq!(journal.len(), *ends.last().unwrap());
            assert!(
                ends.windows(2).any(|w| w[0] / BLOCK == w[1] / BLOCK),
                "two entries share a block"
            );
            assert!(
                ends.windows(2).any(|w| w[1] / BLOCK > w[0] / BLOCK + 1),
                "an entry spans a block"
            );
            let bytes = std::fs::read(dir.path().join(FILE_NAME)).unwrap();
            assert!(
                bytes[journal.len() as usize..].iter().all(|&b| b == 0),
                "nothing but zeros after the last entry"
            );
            files.push(bytes);
        }
        assert_eq!(files[0], files[1]);
    }

    /// A direct write refused after the journal was opened (here: the direct handle cannot
    /// write at all) falls back to buffered writes for good, and loses nothing.
    #[test]
    fn a_refused_direct_write_falls_back_to_buffered_writes() {
        let dir = tempfile::tempdir().unwrap();
        let (mut journal, _) = Journal::open(dir.path(), 0).unwrap();
        let first = vec![append("aaaa", 1..=2, &[])];
        write(&mut journal, &first).unwrap();
        // A handle opened for reading only: every write through it fails (EBADF).
        journal.direct = Some(File::open(dir.path().join(FILE_NAME)).unwrap());
        let second = vec![append("aaaa", 3..=5, &[(3, 1)])];
        write(&mut journal, &second).unwrap();
        assert!(!journal.writes_directly());
        let third = vec![append("bbbb", 1..=1, &[])];
        write(&mut journal, &third).unwrap();
        drop(journal);
        let (_, found) = Journal::open(dir.path(), 0).unwrap();
        assert_eq!(found.appends, [first, second, third].concat());
    }

    /// An entry that ends exactly on a block's edge leaves no tail; the next starts a block.
    #[test]
    fn an_entry_ending_on_a_block_edge_leaves_no_tail() {
        let dir = tempfile::tempdir().unwrap();
        let (mut journal, _) = Journal::open(dir.path(), 0).unwrap();
        // One record of exactly the bytes that make the entry fill the first block.
        let overhead = encode_entry(0, &[append("aaaa", 1..=1, &[])]).len() - 11;
        let record: RecordBytes = vec![7u8; BLOCK as usize - overhead].into();
        let filling = vec![JournaledAppend {
            game_id: "aaaa".to_string(),
            records: vec![(1, record)],
            marked: vec![],
        }];
        write(&mut journal, &filling).unwrap();
        assert_eq!(journal.len(), BLOCK);
        assert!(journal.tail.is_empty());
        let next = vec![append("aaaa", 2..=2, &[])];
        write(&mut journal, &next).unwrap();
        drop(journal);
        let (_, found) = Journal::open(dir.path(), 0).unwrap();
        assert_eq!(found.appends, [filling, next].concat());
    }

    #[test]
    fn a_batch_that_does_not_fit_is_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let (mut journal, _) = Journal::open_with_capacity(dir.path(), 0, 200).unwrap();
        write(&mut journal, &[append("aaaa", 1..=1, &[])]).unwrap();
        let used = journal.len();
        assert!(write(&mut journal, &[append("aaaa", 2..=9, &[])]).is_err());
        assert_eq!(journal.len(), used);
        journal.start_over(1);
        write(&mut journal, &[append("aaaa", 2..=3, &[])]).unwrap();
        // Direct writes cover whole blocks (the real capacity is a multiple of them).
        let limit = if journal.writes_directly() {
            200u64.next_multiple_of(BLOCK)
        } else {
            200
        };
        assert!(std::fs::metadata(dir.path().join(FILE_NAME)).unwrap().len() <= limit);
    }
}
