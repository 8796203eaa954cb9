"""Making the sound of an announcement: the chime, the spoken sentence, and the audio player.

`lobby_display.announce` puts these together into one ordered announcement queue.
"""
