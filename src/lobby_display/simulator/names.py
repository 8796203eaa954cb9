"""Names of the simulated town hall in the nine locales: place, queues, desks, appointment types.

Every name is written as a native speaker would read it on a sign; the ticket-label prefixes
(A, B, ..., then AB-, AC-, ...) go with the queue's position in the place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from lobby_display.models import LOCALES

#: One name per locale, keyed by the locale codes of `models.LOCALES`.
LocaleNames = Mapping[str, str]


def _names(*texts: str) -> dict[str, str]:
    """Pair nine texts with the nine locales, in `LOCALES` order."""
    if len(texts) != len(LOCALES):
        raise ValueError(f"expected {len(LOCALES)} names, got {len(texts)}")
    return dict(zip(LOCALES, texts, strict=True))


COMPANY: Final = _names(
    "Ville de Saint-Aubin",
    "City of Saint-Aubin",
    "Ciudad de Saint-Aubin",
    "Stadt Saint-Aubin",
    "圣欧班市",
    "聖歐班市",
    "サントーバン市",
    "생토뱅시",
    "เมืองแซ็งโตบ็อง",
)

PLACE: Final = _names(
    "Mairie de Saint-Aubin",
    "Saint-Aubin Town Hall",
    "Ayuntamiento de Saint-Aubin",
    "Rathaus Saint-Aubin",
    "圣欧班市政厅",
    "聖歐班市政廳",
    "サントーバン市役所",
    "생토뱅 시청",
    "ศาลาว่าการเมืองแซ็งโตบ็อง",
)

#: The company name as it goes into the developer token's `sub` claim.
COMPANY_NAME: Final = COMPANY["fr_FR"]

PLACE_ADDRESS: Final = {
    "address": "1 place de l'Hôtel de Ville",
    "city": "Saint-Aubin",
    "country": "France",
    "zip": "91190",
}
#: Where the place is (Saint-Aubin, Essonne).
PLACE_POSITION: Final = {"lat": 48.7141, "lng": 2.1406}


@dataclass(frozen=True, slots=True)
class EndpointKind:
    """A kind of endpoint (desk, office) with its name pattern per locale; `{n}` is its number."""

    key: str
    patterns: LocaleNames

    def name(self, number: int) -> dict[str, str]:
        """The endpoint's name in every locale."""
        return {locale: text.format(n=number) for locale, text in self.patterns.items()}


DESK: Final = EndpointKind(
    "desk",
    _names(
        "Guichet {n}",
        "Desk {n}",
        "Ventanilla {n}",
        "Schalter {n}",
        "{n}号窗口",
        "{n}號櫃檯",
        "{n}番窓口",
        "{n}번 창구",
        "ช่อง {n}",
    ),
)

OFFICE: Final = EndpointKind(
    "office",
    _names(
        "Bureau {n}",
        "Office {n}",
        "Despacho {n}",
        "Büro {n}",
        "{n}号办公室",
        "{n}號辦公室",
        "{n}番相談室",
        "{n}번 상담실",
        "ห้อง {n}",
    ),
)


# Appointment types, shared by several queues.
WALK_IN: Final = _names(
    "Sans rendez-vous",
    "Walk-in",
    "Sin cita",
    "Ohne Termin",
    "现场办理",
    "現場辦理",
    "予約なし",
    "방문 접수",
    "ไม่ได้นัดหมาย",
)
FIRST_APPLICATION: Final = _names(
    "Première demande",
    "First application",
    "Primera solicitud",
    "Erstantrag",
    "首次申请",
    "首次申請",
    "新規申請",
    "신규 신청",
    "ยื่นคำขอครั้งแรก",
)
RENEWAL: Final = _names(
    "Renouvellement",
    "Renewal",
    "Renovación",
    "Verlängerung",
    "换领",
    "換發",
    "更新",
    "갱신",
    "ต่ออายุ",
)
COLLECTION: Final = _names(
    "Retrait",
    "Collection",
    "Recogida",
    "Abholung",
    "领取",
    "領取",
    "受け取り",
    "수령",
    "รับเอกสาร",
)
BIRTH_CERTIFICATE: Final = _names(
    "Acte de naissance",
    "Birth certificate",
    "Partida de nacimiento",
    "Geburtsurkunde",
    "出生证明",
    "出生證明",
    "出生証明書",
    "출생증명서",
    "สูติบัตร",
)
MARRIAGE: Final = _names(
    "Mariage",
    "Marriage",
    "Matrimonio",
    "Eheschließung",
    "结婚登记",
    "結婚登記",
    "婚姻届",
    "혼인 신고",
    "จดทะเบียนสมรส",
)
CONSULTATION: Final = _names(
    "Consultation",
    "Consultation",
    "Consulta",
    "Beratung",
    "咨询",
    "諮詢",
    "相談",
    "상담",
    "ปรึกษา",
)
FILING: Final = _names(
    "Dépôt de dossier",
    "Submitting a file",
    "Entrega de documentación",
    "Antragsabgabe",
    "递交材料",
    "遞交文件",
    "書類提出",
    "서류 제출",
    "ยื่นเอกสาร",
)


@dataclass(frozen=True, slots=True)
class Service:
    """A service of the town hall: one queue's name, how it works, and what it offers."""

    names: LocaleNames
    appointment: bool
    """True: tickets are appointments bound to a time; False: first come, first served."""
    appointment_types: tuple[LocaleNames, ...]
    max_group: int
    """Largest group that can share a ticket."""
    endpoint_kind: EndpointKind


#: The services of the place, in order; a place with more queues reuses them with a number.
SERVICES: Final[tuple[Service, ...]] = (
    Service(
        _names(
            "Cartes d'identité",
            "Identity cards",
            "Documentos de identidad",
            "Personalausweise",
            "身份证",
            "身分證",
            "身分証明書",
            "신분증",
            "บัตรประชาชน",
        ),
        appointment=True,
        appointment_types=(FIRST_APPLICATION, RENEWAL, COLLECTION),
        max_group=4,
        endpoint_kind=DESK,
    ),
    Service(
        _names(
            "État civil",
            "Civil registry",
            "Registro civil",
            "Standesamt",
            "户籍登记",
            "戶籍登記",
            "戸籍・住民票",
            "가족관계등록",
            "ทะเบียนราษฎร์",
        ),
        appointment=False,
        appointment_types=(BIRTH_CERTIFICATE, MARRIAGE),
        max_group=2,
        endpoint_kind=DESK,
    ),
    Service(
        _names(
            "Passeports",
            "Passports",
            "Pasaportes",
            "Reisepässe",
            "护照",
            "護照",
            "パスポート",
            "여권",
            "หนังสือเดินทาง",
        ),
        appointment=True,
        appointment_types=(FIRST_APPLICATION, RENEWAL, COLLECTION),
        max_group=5,
        endpoint_kind=DESK,
    ),
    Service(
        _names(
            "Accueil",
            "Reception",
            "Información",
            "Empfang",
            "咨询台",
            "服務台",
            "総合案内",
            "안내",
            "ประชาสัมพันธ์",
        ),
        appointment=False,
        appointment_types=(WALK_IN,),
        max_group=1,
        endpoint_kind=DESK,
    ),
    Service(
        _names(
            "Urbanisme",
            "Planning and building permits",
            "Urbanismo",
            "Bauamt",
            "规划与建筑许可",
            "都市計畫與建築執照",
            "建築確認",
            "건축 인허가",
            "ขออนุญาตก่อสร้าง",
        ),
        appointment=True,
        appointment_types=(CONSULTATION, FILING),
        max_group=3,
        endpoint_kind=OFFICE,
    ),
    Service(
        _names(
            "Titres de séjour",
            "Residence permits",
            "Permisos de residencia",
            "Aufenthaltstitel",
            "居留许可",
            "居留許可",
            "在留許可",
            "체류 허가",
            "ใบอนุญาตพำนัก",
        ),
        appointment=True,
        appointment_types=(FIRST_APPLICATION, RENEWAL),
        max_group=3,
        endpoint_kind=DESK,
    ),
    Service(
        _names(
            "Action sociale",
            "Social services",
            "Servicios sociales",
            "Sozialamt",
            "社会救助",
            "社會福利",
            "福祉相談",
            "사회복지",
            "สวัสดิการสังคม",
        ),
        appointment=False,
        appointment_types=(CONSULTATION, FILING),
        max_group=4,
        endpoint_kind=OFFICE,
    ),
    Service(
        _names(
            "Cartes grises",
            "Vehicle registration",
            "Matriculación de vehículos",
            "Kfz-Zulassung",
            "机动车登记",
            "車輛登記",
            "自動車登録",
            "자동차 등록",
            "ทะเบียนรถ",
        ),
        appointment=False,
        appointment_types=(FIRST_APPLICATION, COLLECTION),
        max_group=1,
        endpoint_kind=DESK,
    ),
    Service(
        _names(
            "Élections",
            "Electoral roll",
            "Censo electoral",
            "Wahlamt",
            "选民登记",
            "選民登記",
            "選挙人名簿",
            "선거인 등록",
            "ทะเบียนผู้มีสิทธิเลือกตั้ง",
        ),
        appointment=False,
        appointment_types=(WALK_IN,),
        max_group=1,
        endpoint_kind=DESK,
    ),
    Service(
        _names(
            "Inscriptions scolaires",
            "School enrolment",
            "Matrícula escolar",
            "Schulanmeldung",
            "入学登记",
            "入學登記",
            "就学手続き",
            "취학 신청",
            "ลงทะเบียนเข้าเรียน",
        ),
        appointment=True,
        appointment_types=(FILING, CONSULTATION),
        max_group=3,
        endpoint_kind=OFFICE,
    ),
    Service(
        _names(
            "Impôts locaux",
            "Local taxes",
            "Impuestos municipales",
            "Gemeindesteuern",
            "地方税",
            "地方稅",
            "市税",
            "지방세",
            "ภาษีท้องถิ่น",
        ),
        appointment=False,
        appointment_types=(CONSULTATION,),
        max_group=2,
        endpoint_kind=DESK,
    ),
    Service(
        _names(
            "Permis de conduire",
            "Driving licences",
            "Permisos de conducir",
            "Führerscheine",
            "驾驶证",
            "駕照",
            "運転免許証",
            "운전면허증",
            "ใบขับขี่",
        ),
        appointment=True,
        appointment_types=(FIRST_APPLICATION, RENEWAL, COLLECTION),
        max_group=1,
        endpoint_kind=DESK,
    ),
)

# Letters of single-letter prefixes: I and O are left out (read as 1 and 0 from afar).
_LETTERS: Final = "ABCDEFGHJKLMNPQRSTUVWXYZ"


def service_for(index: int) -> tuple[Service, dict[str, str]]:
    """The service of the queue at `index` and its names (numbered when services repeat)."""
    service = SERVICES[index % len(SERVICES)]
    round_ = index // len(SERVICES)
    if round_ == 0:
        return service, dict(service.names)
    return service, {locale: f"{text} {round_ + 1}" for locale, text in service.names.items()}


def label_prefix(index: int) -> str:
    """The ticket-label prefix of the queue at `index`: A, B, ..., Z, then AB-, AC-, ...

    Single letters give labels like `A017`; past the alphabet, two letters and a dash give
    labels like `BX-12`.
    """
    if index < len(_LETTERS):
        return _LETTERS[index]
    rest = index - len(_LETTERS)
    first, second = divmod(rest, len(_LETTERS) - 1)
    first %= len(_LETTERS)
    letters = _LETTERS[first] + [c for c in _LETTERS if c != _LETTERS[first]][second]
    return f"{letters}-"


def ticket_label(prefix: str, number: int) -> str:
    """A ticket label: `A017` for a single-letter prefix, `BX-12` for a two-letter one."""
    if prefix.endswith("-"):
        return f"{prefix}{number:02d}"
    return f"{prefix}{number:03d}"
