//! One drawing backend type for the canvas and the SVG download: every chart function is generic over its
//! backend, so drawing into both a `CanvasBackend` and an `SVGBackend` would compile every chart twice (about
//! 18 KB of wasm). Drawing through `Either` compiles them once; only this forwarding layer exists per backend.

use plotters::prelude::SVGBackend;
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind};
use plotters_canvas::CanvasBackend;

/// The canvas on the page or the SVG text of a download.
pub enum Either<'a> {
    Canvas(CanvasBackend),
    Svg(SVGBackend<'a>),
}

/// Either backend's error, as text.
#[derive(Debug)]
pub struct DrawError(String);

impl std::fmt::Display for DrawError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DrawError {}

fn conv<E: std::error::Error + Send + Sync>(e: DrawingErrorKind<E>) -> DrawingErrorKind<DrawError> {
    match e {
        DrawingErrorKind::DrawingError(e) => DrawingErrorKind::DrawingError(DrawError(e.to_string())),
        DrawingErrorKind::FontError(f) => DrawingErrorKind::FontError(f),
    }
}

type Res<T = ()> = Result<T, DrawingErrorKind<DrawError>>;

/// Calls the same method on whichever backend it is, converting the error.
macro_rules! both {
    ($self:ident, $b:ident => $call:expr) => {
        match $self {
            Either::Canvas($b) => $call.map_err(conv),
            Either::Svg($b) => $call.map_err(conv),
        }
    };
}

impl DrawingBackend for Either<'_> {
    type ErrorType = DrawError;

    fn get_size(&self) -> (u32, u32) {
        match self {
            Either::Canvas(b) => b.get_size(),
            Either::Svg(b) => b.get_size(),
        }
    }

    fn ensure_prepared(&mut self) -> Res {
        both!(self, b => b.ensure_prepared())
    }

    fn present(&mut self) -> Res {
        both!(self, b => b.present())
    }

    fn draw_pixel(&mut self, point: BackendCoord, color: BackendColor) -> Res {
        both!(self, b => b.draw_pixel(point, color))
    }

    fn draw_line<S: BackendStyle>(&mut self, from: BackendCoord, to: BackendCoord, style: &S) -> Res {
        both!(self, b => b.draw_line(from, to, style))
    }

    fn draw_rect<S: BackendStyle>(&mut self, ul: BackendCoord, br: BackendCoord, style: &S, fill: bool) -> Res {
        both!(self, b => b.draw_rect(ul, br, style, fill))
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(&mut self, path: I, style: &S) -> Res {
        both!(self, b => b.draw_path(path, style))
    }

    fn draw_circle<S: BackendStyle>(&mut self, c: BackendCoord, r: u32, style: &S, fill: bool) -> Res {
        both!(self, b => b.draw_circle(c, r, style, fill))
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(&mut self, vert: I, style: &S) -> Res {
        both!(self, b => b.fill_polygon(vert, style))
    }

    fn draw_text<T: BackendTextStyle>(&mut self, text: &str, style: &T, pos: BackendCoord) -> Res {
        both!(self, b => b.draw_text(text, style, pos))
    }

    fn estimate_text_size<T: BackendTextStyle>(&self, text: &str, style: &T) -> Res<(u32, u32)> {
        both!(self, b => b.estimate_text_size(text, style))
    }

    fn blit_bitmap(&mut self, pos: BackendCoord, size: (u32, u32), src: &[u8]) -> Res {
        both!(self, b => b.blit_bitmap(pos, size, src))
    }
}
