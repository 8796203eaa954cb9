"""Ticket labels drawn as pictures: rasterised from a TrueType font, shown as sixel or mosaic.

`raster` draws a label into a box of pixels; `sixel` encodes that drawing for terminals that
show images; `mosaic` turns it into sub-cell block characters for those that do not;
`terminal` finds out which of them the terminal on screen can show. None of them knows Textual.
"""
